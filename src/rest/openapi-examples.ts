// Written by test/openapi-examples.test.ts (UPDATE_OPENAPI_EXAMPLES=1): each operation's request and
// answer on the demo data, for the OpenAPI document's examples. The test fails when one is missing or
// no longer matches its schema. Do not edit by hand.
export const operationExamples: Record<string, { parameters?: Record<string, unknown>; request?: unknown; response?: unknown }> = {
  "Mutation.update_car": {
    "parameters": {
      "id": 1
    },
    "request": {
      "car": {
        "stocknum": "MEL1002",
        "dealership_id": 1,
        "make": "Toyota",
        "model": "LandCruiser Prado",
        "year": 2022,
        "dapprice": 31990,
        "odometer": 42150
      }
    },
    "response": {
      "car": {
        "advertised_price": null,
        "badge": "VX",
        "body": "SUV",
        "build_date": "2022-06-06",
        "car_type": "used",
        "certified": false,
        "colour": "Graphite Grey",
        "compliance_date": "2022-06-14",
        "created_at": "2026-08-11T12:41:46.647Z",
        "custom_attributes": [],
        "dapprice": 31990,
        "dealercomments": "Immaculate condition inside and out. Comes with the balance of factory warranty.",
        "dealership_id": 1,
        "doors": 5,
        "drive": "4WD",
        "egcprice": null,
        "external_video_url": null,
        "features": [
          "Reversing Camera",
          "Apple CarPlay"
        ],
        "fuel": "Diesel",
        "grey_market_import": false,
        "id": 1,
        "images": [
          "https://cdn.dealerdemo.com.au/stock/richmond-toyota/mel1002/1.jpg",
          "https://cdn.dealerdemo.com.au/stock/richmond-toyota/mel1002/2.jpg"
        ],
        "interior_colour": "Black Suede",
        "item_type": "car",
        "load_to_autotrader": false,
        "load_to_carsales": true,
        "load_to_drive": true,
        "location_id": 1,
        "locked_fields": [],
        "make": "Toyota",
        "model": "LandCruiser Prado",
        "nvic_code": null,
        "odometer": 42150,
        "redbook_code": "AUVTOYO2022SWYJ",
        "rego": "JLK385",
        "rego_expiry": "2027-04-25",
        "rego_state": "VIC",
        "reserved": false,
        "reserved_at": null,
        "seats": 7,
        "series": null,
        "show_on_dealer_website": true,
        "slug": "2022-toyota-landcruiser-prado-vx-1",
        "status": "available",
        "stocknum": "MEL1002",
        "subscription_plan_id": "plan_uSbOjyjpR4",
        "transmission": "Automatic",
        "updated_at": "2026-11-21T09:00:00.000Z",
        "vin": "JTEL9WSVWBZR388DY",
        "year": 2022
      },
      "skipped_fields": []
    }
  },
  "Query.car_performance": {
    "parameters": {
      "id": "1"
    },
    "response": {
      "car_type": "used",
      "created_at": "2026-08-11T12:41:46.647Z",
      "days_old": 101,
      "days_to_twenty_photos": null,
      "id": 1,
      "last_price_change": "2026-11-21T09:00:00.000Z",
      "leads": [
        {
          "created_at": "2026-11-21T09:00:00.000Z",
          "id": 177,
          "lead_state": "new",
          "lead_status": "open",
          "source": "Website"
        }
      ],
      "leads_count": 1,
      "make": "Toyota",
      "model": "LandCruiser Prado",
      "phone_calls": 0,
      "photos_count": 15,
      "price_changes": [
        {
          "dapprice": 31990,
          "egcprice": 0,
          "updated_at": "2026-11-21T09:00:00.000Z"
        }
      ],
      "price_changes_count": 1,
      "price_type": "dapprice",
      "slug": "2022-toyota-landcruiser-prado-vx-1",
      "sold_date": null,
      "start_price": 41590,
      "status": "available",
      "stocknum": "MEL1002",
      "updated_at": "2026-11-21T09:00:00.000Z",
      "views": 399,
      "vin": "JTEL9WSVWBZR388DY"
    }
  },
  "Query.car_payment_processors": {
    "parameters": {
      "id": "1",
      "website": "richmond-toyota"
    },
    "response": {
      "payment_processors": [
        {
          "apple_pay_enabled": true,
          "authorization_key": "wc_test_7481df395a605a157afbd2865f65d200",
          "authorization_type": "windcave",
          "deposit_amount": 250,
          "google_merchant_id": "",
          "google_pay_enabled": false,
          "id": 1,
          "merchant_id": "RichmondToyota_REST",
          "supports_all_types": false,
          "types": [
            "deposit"
          ]
        }
      ]
    }
  },
  "Query.model_variant": {
    "parameters": {
      "slug": "toyota-corolla-sx-hybrid",
      "website_id": "richmond-toyota"
    },
    "response": {
      "availability_matrix": [
        {
          "category": {
            "id": 1,
            "name": "Engine",
            "position": 1,
            "slug": "engine"
          },
          "options": [
            {
              "availability": "standard",
              "configurable_option": {
                "code": "TOW-PACK",
                "description": "Towbar and trailer wiring harness",
                "id": 1,
                "position": 1,
                "recommended_retail_price_cents": 129000
              },
              "id": 14
            },
            {
              "availability": "standard",
              "configurable_option": {
                "code": "ENGINE-GUARD",
                "description": "Under-body engine protection plate",
                "id": 2,
                "position": 2,
                "recommended_retail_price_cents": 54900
              },
              "id": 15
            }
          ]
        },
        {
          "category": {
            "id": 2,
            "name": "Dimensions",
            "position": 2,
            "slug": "dimensions"
          },
          "options": [
            {
              "availability": "unavailable",
              "configurable_option": {
                "code": "ROOF-RAILS",
                "description": "Roof rails with cross bars",
                "id": 3,
                "position": 1,
                "recommended_retail_price_cents": 69900
              },
              "id": 16
            },
            {
              "availability": "optional",
              "configurable_option": {
                "code": "CARGO-LINER",
                "description": "Moulded cargo liner",
                "id": 4,
                "position": 2,
                "recommended_retail_price_cents": 18900
              },
              "id": 17
            }
          ]
        }
      ],
      "banner_data": {
        "height": 600,
        "key": "banners/toyota/corolla/sx-hybrid.jpg",
        "url": "https://cdn.dealerdemo.com.au/banners/toyota/corolla/sx-hybrid.jpg",
        "width": 1920
      },
      "bodyStyle": "Hatchback",
      "brochure_url": "https://cdn.dealerdemo.com.au/brochures/toyota-corolla-2025.pdf",
      "cylinders": 4,
      "description": "<p>The 2025 Toyota Corolla SX Hybrid pairs a 1.8L hybrid engine with FWD and a cvt transmission.</p><p>Backed by a 5-year unlimited kilometre warranty.</p>",
      "engine_capacity": "1798cc",
      "fuel": "Hybrid",
      "full_name": "2025 Toyota Corolla SX Hybrid",
      "gvm": 1815,
      "id": 2,
      "image": {
        "thumb": {
          "url": "https://cdn.dealerdemo.com.au/new-vehicles/toyota/corolla/sx-hybrid/hero-thumb.jpg"
        },
        "url": "https://cdn.dealerdemo.com.au/new-vehicles/toyota/corolla/sx-hybrid/hero.jpg"
      },
      "interior_image_url": "https://cdn.dealerdemo.com.au/new-vehicles/toyota/corolla/sx-hybrid/interior-1.jpg",
      "isElectric": false,
      "isHybrid": true,
      "modelCode": "ZWE219R",
      "model_id": 1,
      "name": "SX Hybrid",
      "price": 37490,
      "redbookCode": "AUVTOYO20254JDB",
      "seats": 5,
      "second_interior_image_url": "https://cdn.dealerdemo.com.au/new-vehicles/toyota/corolla/sx-hybrid/interior-2.jpg",
      "series": "E210",
      "short_description": "Corolla SX Hybrid: 103kW, 4L/100km, FWD.",
      "slug": "toyota-corolla-sx-hybrid",
      "specifications": [
        {
          "category": {
            "id": 1,
            "name": "Engine",
            "position": 1,
            "slug": "engine"
          },
          "fields": [
            {
              "id": 1,
              "name": "Engine type",
              "position": 1,
              "slug": "engine-type",
              "value": "4-cylinder petrol-electric hybrid"
            },
            {
              "id": 2,
              "name": "Displacement",
              "position": 2,
              "slug": "displacement",
              "value": "1798cc"
            }
          ]
        },
        {
          "category": {
            "id": 2,
            "name": "Dimensions",
            "position": 2,
            "slug": "dimensions"
          },
          "fields": [
            {
              "id": 7,
              "name": "Overall length",
              "position": 1,
              "slug": "overall-length",
              "value": "4375mm"
            },
            {
              "id": 8,
              "name": "Overall width",
              "position": 2,
              "slug": "overall-width",
              "value": "1790mm"
            }
          ]
        }
      ],
      "tare_weight": 1400,
      "transmission": "CVT",
      "variant_category": "Mid-range",
      "vehicle_category": "Passenger",
      "year": 2025,
      "youtube_id": "D39Gj8J872c"
    }
  },
  "Query.manufacturer_offers": {
    "parameters": {
      "id": 1
    },
    "response": [
      {
        "created_at": "2026-10-17T09:00:00.000Z",
        "dealership_ids": [
          1,
          4
        ],
        "description": "<p>Enjoy <strong>2.99% p.a.</strong> comparison rate on the Toyota RAV4 range.</p><ul><li>48 month term</li><li>No deposit required</li></ul>",
        "disclaimer": "Offer available on new Toyota RAV4 vehicles ordered and delivered by 2027-02-14, while stocks last. Not available with any other offer. Excludes fleet, government and rental buyers.",
        "expires_at": "2027-02-14",
        "expiry_in_words": "in 85 days",
        "id": 2,
        "image_or_model_image": {
          "thumb": {
            "url": "https://cdn.dealerdemo.com.au/offers/toyota-rav4-thumb.jpg"
          },
          "url": "https://cdn.dealerdemo.com.au/offers/toyota-rav4.jpg"
        },
        "images": [
          {
            "thumb": {
              "url": "https://cdn.dealerdemo.com.au/offers/2/1-thumb.jpg"
            },
            "url": "https://cdn.dealerdemo.com.au/offers/2/1.jpg"
          },
          {
            "thumb": {
              "url": "https://cdn.dealerdemo.com.au/offers/2/2-thumb.jpg"
            },
            "url": "https://cdn.dealerdemo.com.au/offers/2/2.jpg"
          }
        ],
        "manufacturer": "Toyota",
        "manufacturer_id": 1,
        "model": {
          "name": "RAV4",
          "new_slug": "rav4",
          "path": "/new-vehicles/toyota/rav4",
          "slug": "toyota-rav4"
        },
        "name": "RAV4 2.99% p.a. finance offer",
        "sanitized_description": "<p>Enjoy <strong>2.99% p.a.</strong> comparison rate on the Toyota RAV4 range.</p><ul><li>48 month term</li><li>No deposit required</li></ul>",
        "updated_at": "2026-10-17T09:00:00.000Z"
      },
      {
        "created_at": "2026-10-11T09:00:00.000Z",
        "dealership_ids": [
          1,
          4
        ],
        "description": "<p>Drive away the <strong>Toyota HiLux Workmate 4x2 Double Cab</strong> for <em>$43,630</em>.</p><p><a href=\"https://www.toyota.com.au/new-vehicles/toyota/hilux\">Explore the range</a></p>",
        "disclaimer": "Offer available on new Toyota HiLux vehicles ordered and delivered by 2026-12-16, while stocks last. Not available with any other offer. Excludes fleet, government and rental buyers.",
        "expires_at": "2026-12-16",
        "expiry_in_words": "in 25 days",
        "id": 3,
        "image_or_model_image": {
          "thumb": {
            "url": "https://cdn.dealerdemo.com.au/new-vehicles/toyota/hilux/workmate-4x2-double-cab/hero-thumb.jpg"
          },
          "url": "https://cdn.dealerdemo.com.au/new-vehicles/toyota/hilux/workmate-4x2-double-cab/hero.jpg"
        },
        "images": [
          {
            "thumb": {
              "url": "https://cdn.dealerdemo.com.au/offers/3/1-thumb.jpg"
            },
            "url": "https://cdn.dealerdemo.com.au/offers/3/1.jpg"
          },
          {
            "thumb": {
              "url": "https://cdn.dealerdemo.com.au/offers/3/2-thumb.jpg"
            },
            "url": "https://cdn.dealerdemo.com.au/offers/3/2.jpg"
          }
        ],
        "manufacturer": "Toyota",
        "manufacturer_id": 1,
        "model": {
          "name": "HiLux",
          "new_slug": "hilux",
          "path": "/new-vehicles/toyota/hilux",
          "slug": "toyota-hilux"
        },
        "name": "HiLux Workmate 4x2 Double Cab from $43,630 drive away",
        "sanitized_description": "<p>Drive away the <strong>Toyota HiLux Workmate 4x2 Double Cab</strong> for <em>$43,630</em>.</p><p><a href=\"https://www.toyota.com.au/new-vehicles/toyota/hilux\">Explore the range</a></p>",
        "updated_at": "2026-10-11T09:00:00.000Z"
      }
    ]
  },
  "Query.website_offer": {
    "parameters": {
      "website_id": 1,
      "id": 13
    },
    "response": {
      "category": "Drive Away",
      "created_at": "2026-10-10T09:00:00.000Z",
      "dealership_ids": [
        1
      ],
      "description": "<h3>Drive Away offer</h3><p>Visit Richmond Toyota for our best deal on the Toyota Corolla.</p><ul><li>Free tinted windows</li><li>Complimentary first service</li></ul>",
      "disclaimer": "Available at Richmond Toyota only. Conditions apply; see in store for details.",
      "expires_at": "2027-01-19",
      "expiry_in_words": "in 59 days",
      "id": 13,
      "manufacturer": "Toyota",
      "manufacturer_id": 1,
      "model": {
        "name": "Corolla",
        "new_slug": "corolla",
        "override_url": null,
        "path": "/new-vehicles/toyota/corolla",
        "slug": "toyota-corolla"
      },
      "name": "Richmond Toyota: Corolla drive away special",
      "preferred_locations": [
        {
          "id": 1,
          "name": "Richmond Toyota"
        }
      ],
      "sanitized_description": "<h3>Drive Away offer</h3><p>Visit Richmond Toyota for our best deal on the Toyota Corolla.</p><ul><li>Free tinted windows</li><li>Complimentary first service</li></ul>",
      "updated_at": "2026-10-10T09:00:00.000Z"
    }
  },
  "Query.apikey_details": {
    "response": {
      "dealerships": [
        {
          "id": 1,
          "locations": [
            {
              "id": 1,
              "location_type": "sales",
              "name": "Richmond Toyota"
            },
            {
              "id": 2,
              "location_type": "service",
              "name": "Richmond Toyota Service Centre"
            }
          ],
          "name": "Richmond Toyota",
          "slug": "richmond-toyota",
          "users": [
            {
              "email": "michael.harrington@richmondtoyota.com.au",
              "id": 1,
              "name": "Michael Harrington"
            },
            {
              "email": "priya.raman@richmondtoyota.com.au",
              "id": 2,
              "name": "Priya Raman"
            }
          ]
        },
        {
          "id": 2,
          "locations": [
            {
              "id": 4,
              "location_type": "sales",
              "name": "Doncaster Mazda"
            },
            {
              "id": 5,
              "location_type": "sales",
              "name": "Doncaster Kia"
            }
          ],
          "name": "Doncaster Mazda Kia",
          "slug": "doncaster-mazda-kia",
          "users": [
            {
              "email": "sarah.mitchell@doncastermazdakia.com.au",
              "id": 4,
              "name": "Sarah Mitchell"
            },
            {
              "email": "james.obrien@doncastermazdakia.com.au",
              "id": 5,
              "name": "James O'Brien"
            }
          ]
        }
      ],
      "id": 8,
      "permissions": []
    }
  },
  "Mutation.create_lead": {
    "request": {
      "lead": {
        "name": "Sam Nguyen",
        "email": "sam.nguyen@example.com",
        "phone": "0423 456 789",
        "dealership_id": 1,
        "category": "Used Vehicle Enquiry",
        "source": "Website",
        "stocknum": "MEL1002",
        "message": "Is it still available?"
      }
    },
    "response": {
      "lead": {
        "address": null,
        "car_id": 1,
        "category": "Used Vehicle Enquiry",
        "certified": false,
        "charge_breakdown": null,
        "colour_id": null,
        "contact_id": 130,
        "created_at": "2026-11-21T09:00:00.000Z",
        "customer_address": null,
        "dealership_id": 1,
        "dealership_slug": null,
        "delay_customer_email_minutes": null,
        "delay_dealership_notification_minutes": null,
        "disable_strict_validation": false,
        "dob": null,
        "email": "sam.nguyen@example.com",
        "fields": {},
        "files": [],
        "golden": false,
        "id": 178,
        "last_name": null,
        "lead_state": "new",
        "lead_status": "open",
        "location_id": null,
        "marketing_source": null,
        "message": "Is it still available?",
        "model_id": null,
        "model_variant_id": null,
        "name": "Sam Nguyen",
        "opt_in_to_marketing": false,
        "page_id": null,
        "payment": null,
        "phone": "+61423456789",
        "provider": null,
        "provider_id": null,
        "send_customer_email": true,
        "sms_verified": false,
        "source": "Website",
        "stocknum": "MEL1002",
        "tags": [],
        "team_member_id": null,
        "time_on_site_seconds": null,
        "time_to_submit_seconds": null,
        "updated_at": "2026-11-21T09:00:00.000Z",
        "user_email": null,
        "user_id": null,
        "website_id": null,
        "website_slug": null
      }
    }
  },
  "Mutation.update_lead": {
    "parameters": {
      "id": 177
    },
    "request": {
      "lead": {
        "lead_state": "contacted",
        "message": "Called back, test drive on Saturday."
      }
    },
    "response": {
      "lead": {
        "address": null,
        "car_id": 1,
        "category": "Used Vehicle Enquiry",
        "certified": false,
        "charge_breakdown": null,
        "colour_id": null,
        "contact_id": 129,
        "created_at": "2026-11-21T09:00:00.000Z",
        "customer_address": null,
        "dealership_id": 1,
        "dealership_slug": null,
        "delay_customer_email_minutes": null,
        "delay_dealership_notification_minutes": null,
        "disable_strict_validation": false,
        "dob": null,
        "email": "jordan@example.com",
        "fields": {},
        "files": [],
        "golden": false,
        "id": 177,
        "last_name": null,
        "lead_state": "contacted",
        "lead_status": "open",
        "location_id": null,
        "marketing_source": null,
        "message": "Called back, test drive on Saturday.",
        "model_id": null,
        "model_variant_id": null,
        "name": "Jordan Lee",
        "opt_in_to_marketing": false,
        "page_id": null,
        "payment": null,
        "phone": "+61412345678",
        "provider": null,
        "provider_id": null,
        "send_customer_email": true,
        "sms_verified": false,
        "source": "Website",
        "stocknum": "MEL1002",
        "tags": [],
        "team_member_id": null,
        "time_on_site_seconds": null,
        "time_to_submit_seconds": null,
        "updated_at": "2026-11-21T09:00:00.000Z",
        "user_email": null,
        "user_id": null,
        "website_id": null,
        "website_slug": null
      }
    }
  },
  "Mutation.create_partner_token": {
    "request": {
      "email": "michael.harrington@richmondtoyota.com.au"
    },
    "response": {
      "expires_at": "2026-11-21T09:10:00.000Z",
      "redirect_url": "http://localhost:4000/api/v1/partner/sign_on?token=7SRFzW9RpX-zu6fACq9EB8ooGojUw47aX9PE7rWlT1A"
    }
  },
  "Mutation.create_lead_event": {
    "parameters": {
      "service": "sms",
      "data": {
        "leadId": "177",
        "messageDetail": {
          "contactType": "sms",
          "description": "Reminder: test drive Saturday 10am",
          "sentDate": "2026-11-21T10:15:00"
        }
      }
    },
    "response": {
      "contact_type": "sms",
      "created_at": "2026-11-21T09:00:00.000Z",
      "description": "Reminder: test drive Saturday 10am",
      "id": 98,
      "lead_id": 177,
      "link_reply_as_assistant": null,
      "link_stop_communication": null,
      "sent_by": null,
      "sent_date": "2026-11-20T23:15:00.000Z",
      "service": "sms"
    }
  },
  "Query.contact": {
    "parameters": {
      "dealership_id": 1,
      "id": 1
    },
    "response": {
      "dealership_id": 1,
      "first_name": "Charlotte",
      "id": 1,
      "postcode": null,
      "vehicles": [
        {
          "id": 1,
          "make": "Mazda",
          "model": "BT-50",
          "rego": "YDE718",
          "year": 2019
        }
      ]
    }
  },
  "Query.contacts": {
    "parameters": {
      "dealership_id": 1,
      "page": 1,
      "per_page": 20
    },
    "response": [
      {
        "dealership_id": 1,
        "first_name": "Charlotte",
        "id": 1,
        "postcode": null,
        "vehicles": [
          {
            "id": 1,
            "make": "Mazda",
            "raw_model": "BT-50",
            "rego": "YDE718",
            "year": 2019
          }
        ]
      },
      {
        "dealership_id": 1,
        "first_name": "Rhys",
        "id": 2,
        "postcode": null,
        "vehicles": [
          {
            "id": 2,
            "make": "Kia",
            "raw_model": "Sorento",
            "rego": "ZJZ034",
            "year": 2022
          },
          {
            "id": 3,
            "make": "Nissan",
            "raw_model": "X-Trail",
            "rego": "YWL278",
            "year": 2018
          }
        ]
      }
    ]
  },
  "Query.partner_dealerships": {
    "response": {
      "dealerships": [
        {
          "dealership_id": 1,
          "dealership_name": "Richmond Toyota",
          "id": 1,
          "name": "Richmond Toyota",
          "partner_account_id": "ACC-79050",
          "partner_dealership_id": "D10137"
        },
        {
          "dealership_id": 1,
          "dealership_name": "Richmond Toyota",
          "id": 2,
          "name": "Richmond Toyota Service Centre",
          "partner_account_id": "ACC-79050",
          "partner_dealership_id": "D10274"
        }
      ]
    }
  },
  "Query.search_dealerships_by_postcode": {
    "parameters": {
      "id": 1,
      "postcode": "3000",
      "limit": 5
    },
    "response": [
      {
        "address": {
          "addressable_id": 1,
          "addressable_type": "Location",
          "city": "Richmond",
          "created_at": "2024-06-04T09:00:00.000Z",
          "id": 1,
          "lat": -37.827866,
          "long": 145.001136,
          "name": "Richmond Toyota",
          "place_id": "ChIJPnBnajRp_hdcEwmjzJkBnKF",
          "place_url": "https://maps.google.com/?cid=5111867006491038768",
          "postcode": 3121,
          "seo_city": "Melbourne",
          "state": "VIC",
          "street": "350 Victoria Street",
          "updated_at": "2024-06-04T09:00:00.000Z"
        },
        "contact_detail": {
          "contactable_id": 1,
          "contactable_type": "Location",
          "created_at": "2024-06-04T09:00:00.000Z",
          "email": "sales@richmondtoyota.com.au",
          "facebook_url": "https://www.facebook.com/richmondtoyota",
          "fax": null,
          "google_maps_url": "https://maps.google.com/?cid=5111867006491038768",
          "id": 1,
          "instagram_url": "https://www.instagram.com/richmondtoyota",
          "landline_phone": null,
          "linkedin_url": null,
          "mailchimp_url": null,
          "mobile": null,
          "phone": "+61394285500",
          "place_id": null,
          "tiktok_url": null,
          "updated_at": "2024-06-04T09:00:00.000Z",
          "youtube_url": "https://www.youtube.com/@richmondtoyota"
        },
        "dealership_id": 1,
        "distance_km": 2.2,
        "id": 1,
        "name": "Richmond Toyota",
        "website": {
          "id": 1,
          "name": "Richmond Toyota",
          "url": "https://www.richmond-toyota.com.au"
        },
        "website_url": "https://www.richmond-toyota.com.au"
      },
      {
        "address": {
          "addressable_id": 10,
          "addressable_type": "Location",
          "city": "Alexandria",
          "created_at": "2024-10-02T09:00:00.000Z",
          "id": 10,
          "lat": -33.906619,
          "long": 151.189895,
          "name": "Sydney City Toyota",
          "place_id": "ChIJi8Lj1gROX4MYQbZHZAx3tre",
          "place_url": "https://maps.google.com/?cid=9552881589321603164",
          "postcode": 2015,
          "seo_city": "Sydney",
          "state": "NSW",
          "street": "1 O'Riordan Street",
          "updated_at": "2024-10-02T09:00:00.000Z"
        },
        "contact_detail": {
          "contactable_id": 10,
          "contactable_type": "Location",
          "created_at": "2024-10-02T09:00:00.000Z",
          "email": "sales@sydneycitymotors.com.au",
          "facebook_url": "https://www.facebook.com/sydneycitytoyotamazda",
          "fax": null,
          "google_maps_url": "https://maps.google.com/?cid=9552881589321603164",
          "id": 10,
          "instagram_url": null,
          "landline_phone": null,
          "linkedin_url": null,
          "mailchimp_url": null,
          "mobile": null,
          "phone": "+61283032000",
          "place_id": null,
          "tiktok_url": null,
          "updated_at": "2024-10-02T09:00:00.000Z",
          "youtube_url": "https://www.youtube.com/@sydneycitytoyotamazda"
        },
        "dealership_id": 4,
        "distance_km": 708,
        "id": 10,
        "name": "Sydney City Toyota",
        "website": {
          "id": 4,
          "name": "Sydney City Toyota Mazda",
          "url": "https://www.sydney-city-toyota-mazda.com.au"
        },
        "website_url": "https://www.sydney-city-toyota-mazda.com.au"
      }
    ]
  },
  "Mutation.phone_call_webhook": {
    "request": {
      "called_number": "+61371037153",
      "caller_number": "0412 345 678"
    },
    "response": {
      "id": 41,
      "status": "accepted"
    }
  },
  "Query.dealership_plugins": {
    "parameters": {
      "dealership_slug": "richmond-toyota"
    },
    "response": {
      "plugins": [
        {
          "categories": [
            "finance",
            "calculators"
          ],
          "installed_at": "2026-11-06T17:45:09.178Z",
          "name": "Finance Calculator",
          "slug": "finance-calculator",
          "trial": true
        },
        {
          "categories": [
            "analytics"
          ],
          "installed_at": "2026-08-30T21:55:02.937Z",
          "name": "Google Analytics 4",
          "slug": "google-analytics-4",
          "trial": false
        }
      ]
    }
  },
  "Query.car_redirect": {
    "parameters": {
      "dealership_slug": "richmond-toyota",
      "website_id": "richmond-toyota",
      "stocknum": "MEL1002",
      "fbclid": "IwAR2xQ7demo"
    }
  },
  "Mutation.reserve_car": {
    "parameters": {
      "id": "2",
      "reserved": true
    },
    "response": {
      "id": 2,
      "reserved": true,
      "reserved_at": "2026-11-21T09:00:00.000Z",
      "slug": "2025-toyota-corolla-ascent-sport-hybrid-2",
      "stocknum": "MEL1008"
    }
  },
  "Query.website_models": {
    "parameters": {
      "website_id": "richmond-toyota",
      "version": 2
    },
    "response": {
      "models": [
        {
          "id": 1,
          "manufacturer": "Toyota",
          "name": "Corolla",
          "new_slug": "corolla",
          "override_url": null,
          "path": "/new-vehicles/toyota/corolla",
          "position": 1,
          "price_from": 33990,
          "slug": "toyota-corolla",
          "variants": [
            {
              "id": 1,
              "name": "Ascent Sport Hybrid",
              "price": 33990,
              "slug": "toyota-corolla-ascent-sport-hybrid"
            },
            {
              "id": 2,
              "name": "SX Hybrid",
              "price": 37490,
              "slug": "toyota-corolla-sx-hybrid"
            }
          ]
        },
        {
          "id": 2,
          "manufacturer": "Toyota",
          "name": "RAV4",
          "new_slug": "rav4",
          "override_url": null,
          "path": "/new-vehicles/toyota/rav4",
          "position": 2,
          "price_from": 40990,
          "slug": "toyota-rav4",
          "variants": [
            {
              "id": 4,
              "name": "GX 2WD",
              "price": 40990,
              "slug": "toyota-rav4-gx-2wd"
            },
            {
              "id": 5,
              "name": "GXL Hybrid AWD",
              "price": 50990,
              "slug": "toyota-rav4-gxl-hybrid-awd"
            }
          ]
        }
      ],
      "version": 2,
      "website_id": 1
    }
  },
  "Mutation.redeem_partner_token": {
    "parameters": {
      "token": "7SRFzW9RpX-zu6fACq9EB8ooGojUw47aX9PE7rWlT1A"
    }
  }
};
